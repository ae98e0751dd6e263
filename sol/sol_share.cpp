#include "sol/sol_share.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge {

SolShare sol_share(double time_s, double time_sol_s) {
    SolShare s;
    if (!(time_s > 0.0) || !(time_sol_s > 0.0) || !std::isfinite(time_s) ||
        !std::isfinite(time_sol_s))
        return s;
    s.known = true;
    s.time_over_sol = time_s / time_sol_s;
    s.under_bound = time_s < time_sol_s;
    s.fraction = std::min(1.0, time_sol_s / time_s);
    return s;
}

SolShare sol_share_of_fraction(double time_sol_over_time) {
    return time_sol_over_time > 0.0 && std::isfinite(time_sol_over_time)
               ? sol_share(1.0, time_sol_over_time)
               : SolShare{};
}

double sol_percent(const SolShare& share) { return share.known ? 100.0 * share.fraction : 0.0; }

std::string format_sol_share(const SolShare& share, int decimals, bool name_sol) {
    if (!share.known) return "n/a";
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.*f%%%s", std::clamp(decimals, 0, 6), sol_percent(share),
                  name_sol ? " of SOL" : "");
    std::string out = buf;
    if (share.under_bound) {
        std::snprintf(buf, sizeof buf, " (flagged: under the SOL bound, T = %.3g x T_sol)",
                      share.time_over_sol);
        out += buf;
    }
    return out;
}

}  // namespace kforge
