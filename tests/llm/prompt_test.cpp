// Prompts built from a real suite problem: spec, SOL, best candidates, failures, moves, ask.
#include <gtest/gtest.h>

#include "diagnosis/diagnosis.h"
#include "dsl/reference_card.h"
#include "llm/prompt.h"
#include "problem/spec.h"
#include "sol/calibration.h"
#include "sol/device.h"

namespace kforge::llm {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(LlmPrompt, SystemPromptCarriesTheReferenceCard) {
    auto s = system_prompt();
    EXPECT_TRUE(has(s, dsl::reference_card()));
    EXPECT_TRUE(has(s, "kernel language"));
}

TEST(LlmPrompt, UserPromptCarriesWhatTheSearchKnows) {
    const std::string path = KFORGE_SOURCE_DIR "/problems/linear_bias_gelu_tanh_bf16.json";
    auto problem = load_problem(path);
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto device = find_device("h200");
    ASSERT_TRUE(device.ok());
    auto bounds = compute_bounds(*problem, effective_ceilings(*device, std::nullopt));
    ASSERT_TRUE(bounds.ok());

    search::ProposalContext c;
    c.problem = &*problem;
    c.problem_spec_json = problem_to_json(*problem).dump(2);
    c.bounds = &*bounds;
    search::CandidateView best;
    best.program_text = "program p for \"linear_bias_gelu_tanh_bf16\"\n";
    best.median_ns = bounds->time_fused_s * 1e9 * 2.0;
    best.fraction_of_sol = 0.5;
    KernelDiagnosis k0;
    k0.kernel = "kforge_k0";
    k0.bottleneck = Bottleneck::kTensorComputeBound;
    k0.summary = "kforge_k0: tensor_compute_bound (tensor pipe active % (hmma, gmma) 61 >= 60)";
    k0.moves = moves_for(Bottleneck::kTensorComputeBound, dsl::KernelKind::kGemm);
    best.diagnosis.kernels = {k0};
    best.diagnosis.ptxas_summary = "kforge_k0 sm_90a: 168 registers, 0 B smem, 0 B stack, no spills";
    c.best = {best};
    search::CandidateView failed;
    failed.status = EvalStatus::kInvalidProgram;
    failed.program_text = "program q";
    failed.message = "q.kf:2:5: tile 512x512x64 needs 320 KiB of shared memory";
    c.recent_failures = {failed};
    c.helpful_moves = {"cluster 1x1 -> 2x1 on bf16 linear"};
    c.count = 3;

    auto u = user_prompt(c);
    EXPECT_TRUE(has(u, "\"name\": \"linear_bias_gelu_tanh_bf16\""));
    EXPECT_TRUE(has(u, "compute-bound"));
    // the diagnosis as diagnosis_text renders it: the kernel's line with its moves, then ptxas
    EXPECT_TRUE(has(u, "Diagnosis: " + diagnosis_text(best.diagnosis) + "\n"));
    EXPECT_TRUE(has(u, "-> moves: tile up (bigger tiles keep the tensor pipe fed)"));
    EXPECT_TRUE(has(u, "unfused bound"));
    EXPECT_TRUE(has(u, "50.0% of SOL"));
    EXPECT_TRUE(has(u, "2x T_sol"));
    EXPECT_TRUE(has(u, "tensor_compute_bound (tensor pipe active % (hmma, gmma) 61 >= 60)"));
    EXPECT_TRUE(has(u, "168 registers"));
    EXPECT_TRUE(has(u, "invalid_program"));
    EXPECT_TRUE(has(u, "320 KiB"));
    EXPECT_TRUE(has(u, "cluster 1x1 -> 2x1"));
    EXPECT_TRUE(has(u, "Write 3 new programs"));
    EXPECT_TRUE(has(u, "```kforge"));
}

TEST(LlmPrompt, RepairPromptQuotesTheErrors) {
    auto r = repair_prompt({{2, "program x", "x:1:1: expected 'for'"}}, 1);
    EXPECT_TRUE(has(r, "accepted 1"));
    EXPECT_TRUE(has(r, "Program 2"));
    EXPECT_TRUE(has(r, "expected 'for'"));
}

}  // namespace
}  // namespace kforge::llm
