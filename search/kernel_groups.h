// Kernel groups (issue 26, budget inside a problem): the kernels of a program grouped by the
// identity of their tuning problem - the same kind, the same op chain and the same shapes and
// dtypes (the same conv shape repeated in a ResNet stage, the same linear in each MLP layer) -
// so that the search tunes a group once and reuses its knobs for every member, and prices and
// budgets the group as one (search/group_budget.h).
//
// A kernel's identity is its canonical text with every tuning knob at its default, each tensor
// it names replaced by its dtype and concrete shape (dim names resolved through the problem),
// and, for the kinds that compute one problem op (gemm, conv2d, pool, attention, copy, rnn), the
// attributes of that op (a conv's stride and padding live in the problem, not in the kernel).
// Two kernels that differ in a dim name of equal size or a `let` name are kept apart: a group is
// never merged on a guess.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::search {

// The problem's ops as text without their tensor names (kind and attributes), by op index:
// computed once per problem and handed to kernel_identity.
std::vector<std::string> op_signatures(const Problem& problem);

// The identity of kernel `k` of a program for `problem` (see above).
std::string kernel_identity(const dsl::Kernel& k, const Problem& problem,
                            const std::vector<std::string>& op_sigs);

struct KernelGroup {
    std::string key;              // kernel_identity of its members
    std::vector<size_t> kernels;  // indices into the program's kernels, ascending
    std::string label;            // "k0" or "k3 x4 (k3,k7,k11,k15)": what a round line shows
};

// The groups of `p`, in the order of their first member.
std::vector<KernelGroup> kernel_groups(const dsl::Program& p, const Problem& problem,
                                       const std::vector<std::string>& op_sigs);

// Kernel `from`'s tuning knobs copied onto `to` (the semantic knobs of `to`, `over`, `eps`,
// `groups`, a scan's direction, an attention's scale, stay its own).
void copy_tuning_knobs(const dsl::Kernel& from, dsl::Kernel& to);

// Whether kernels `a` and `b` have the same tuning knobs.
bool same_tuning_knobs(const dsl::Kernel& a, const dsl::Kernel& b);

// The indices (into `groups`) of the groups of which some member of `to` has other tuning knobs
// than in `from`; nullopt when the two programs differ in structure (search/knob_space.h
// same_structure: a seed variant, another fusion).
std::optional<std::vector<size_t>> changed_groups(const dsl::Program& from, const dsl::Program& to,
                                                  const std::vector<KernelGroup>& groups);

// "Tuned once, reused": `p` with every member of each group given the same tuning knobs - those
// of the first member whose knobs differ from `parent`'s same kernel (the move a proposer made
// on one member), else those of the group's first member. Without a parent of the same
// structure, the first member's. Returns whether anything changed.
bool unify_groups(dsl::Program& p, const dsl::Program* parent, const std::vector<KernelGroup>& groups);

}  // namespace kforge::search
