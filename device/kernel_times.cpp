#include "device/kernel_times.h"

#include <algorithm>

#include "common/stats.h"

namespace kforge::eval {

KernelGrouping group_launches(const std::vector<std::string>& launch_names,
                              const std::vector<std::string>& program_kernels) {
    std::vector<std::string> order;
    for (const std::string& k : program_kernels)
        if (std::find(launch_names.begin(), launch_names.end(), k) != launch_names.end() &&
            std::find(order.begin(), order.end(), k) == order.end())
            order.push_back(k);
    for (const std::string& n : launch_names)
        if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
    KernelGrouping g;
    g.kernels = order.size();
    for (const std::string& n : launch_names)
        g.kernel_of_launch.push_back(static_cast<size_t>(
            std::find(order.begin(), order.end(), n) - order.begin()));
    return g;
}

std::vector<double> median_kernel_times(const KernelGrouping& grouping,
                                        const std::vector<std::vector<double>>& launch_ns) {
    if (launch_ns.empty() || grouping.kernels == 0) return {};
    std::vector<std::vector<double>> per_kernel(grouping.kernels);
    for (const std::vector<double>& row : launch_ns) {
        if (row.size() != grouping.kernel_of_launch.size()) return {};
        std::vector<double> sums(grouping.kernels, 0.0);
        for (size_t i = 0; i < row.size(); ++i) sums[grouping.kernel_of_launch[i]] += row[i];
        for (size_t k = 0; k < sums.size(); ++k) per_kernel[k].push_back(sums[k]);
    }
    std::vector<double> out;
    for (std::vector<double>& v : per_kernel) out.push_back(median(std::move(v)));
    return out;
}

}  // namespace kforge::eval
