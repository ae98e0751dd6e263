// The one way kforge shows how close a time is to the speed of light: T_sol / T as a share of
// SOL, never more than 100%. A time under the bound (T < T_sol) is no faster-than-light kernel:
// it is a kernel cheaper than kforge's instruction model (sol/op_cost.h: a faster formula, an
// approximation within the tolerance), a model or clock error, or gaming. It is shown as 100%
// and marked, and the anti-gaming gate flags it (eval's sol_gaming gate: below the gaming
// threshold it fails the candidate, between the threshold and T_sol it passes, flagged). Every
// place that prints or stores a SOL share (the CLI's progress and result lines, evidence.json,
// the Markdown, HTML and JSON reports, the LLM prompt) goes through here.
#pragma once

#include <string>

namespace kforge {

struct SolShare {
    bool known = false;        // both times positive and finite
    double fraction = 0.0;     // min(1, T_sol / T): what is shown
    bool under_bound = false;  // T < T_sol: shown as 100%, flagged
    double time_over_sol = 0.0;  // T / T_sol as measured (< 1 when under the bound)
};

// The share of `time_s` against the SOL time `time_sol_s`.
SolShare sol_share(double time_s, double time_sol_s);

// The same from a fraction T_sol / T already taken (a search's progress keeps one).
SolShare sol_share_of_fraction(double time_sol_over_time);

// 100 x fraction (0 when unknown): the number JSON and tables carry, at most 100.
double sol_percent(const SolShare& share);

// "87.3% of SOL"; "100.0% of SOL (flagged: under the SOL bound, T = 0.82 x T_sol)"; "n/a" when
// unknown. `decimals` digits after the point; `name_sol` false drops " of SOL" (a table column
// already named %SOL: "87.3%", "100.0% (flagged: ...)").
std::string format_sol_share(const SolShare& share, int decimals = 1, bool name_sol = true);

}  // namespace kforge
