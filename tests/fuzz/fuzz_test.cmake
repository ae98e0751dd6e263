# kforge_add_fuzz_test(NAME SOURCES a.cpp ... DEPS kforge_<stage> ... CORPUS dir [DICT file]
#                      [MAX_LEN n]): a fuzz target (LLVMFuzzerTestOneInput) linked with the
# mutation driver (tests/fuzz/mutation_driver.cpp), and a CTest (label `fuzz`) that replays the
# corpus and mutates it for KFORGE_FUZZ_SECONDS with 1 s of CPU and 256 MB per input. It prints
# the inputs tried, crashes and limit breaches, fails on any, and leaves the reproducers in
# <build>/tests/<stage>/fuzz-findings/NAME/. Reproduce one: `NAME FILE`. The same sources build
# as libFuzzer targets with clang (KFORGE_BUILD_FUZZERS, the `fuzz` preset).
set(KFORGE_FUZZ_SECONDS 12 CACHE STRING "seconds (wall) each fuzz test mutates its corpus in CTest")
set(KFORGE_FUZZ_SEED 1 CACHE STRING "seed of the fuzz tests' mutations")
function(kforge_add_fuzz_test name)
    cmake_parse_arguments(F "" "CORPUS;DICT;MAX_LEN" "SOURCES;DEPS" ${ARGN})
    if(NOT F_MAX_LEN)
        set(F_MAX_LEN 4096)
    endif()
    add_executable(${name} ${F_SOURCES} ${PROJECT_SOURCE_DIR}/tests/fuzz/mutation_driver.cpp)
    target_link_libraries(${name} PRIVATE ${F_DEPS})
    set(args --name ${name} --corpus ${F_CORPUS} --seconds ${KFORGE_FUZZ_SECONDS}
        --seed ${KFORGE_FUZZ_SEED} --max-len ${F_MAX_LEN} --timeout-s 1 --memory-mb 256
        --artifacts ${CMAKE_CURRENT_BINARY_DIR}/fuzz-findings/${name})
    if(F_DICT)
        list(APPEND args --dict ${F_DICT})
    endif()
    add_test(NAME ${name} COMMAND ${name} ${args})
    math(EXPR timeout "${KFORGE_FUZZ_SECONDS} * 3 + 60")
    set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT ${timeout})
endfunction()

# The driver itself: a crash, a hang and an allocation past the limit are each counted as what
# they are (replaying tests/fuzz/selftest/ through a target that misbehaves on request).
add_executable(test_fuzz_driver_selftest ${CMAKE_CURRENT_LIST_DIR}/driver_selftest.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mutation_driver.cpp)
foreach(kind crash hang oom fine)
    set(expect "crashes 0, limit breaches 0")
    if(kind STREQUAL "crash")
        set(expect "crashes 1, limit breaches 0")
    elseif(kind STREQUAL "hang")
        set(expect "crashes 0, limit breaches 1 \\(over 1.0 s cpu: 1")
    elseif(kind STREQUAL "oom")
        set(expect "crashes 0, limit breaches 1 .*over 256 MB: 1")
    endif()
    add_test(NAME test_fuzz_driver_${kind}
             COMMAND test_fuzz_driver_selftest --timeout-s 1 --memory-mb 256
                     ${CMAKE_CURRENT_LIST_DIR}/selftest/${kind})
    set_tests_properties(test_fuzz_driver_${kind} PROPERTIES LABELS unit
                         PASS_REGULAR_EXPRESSION "${expect}" TIMEOUT 60)
endforeach()
