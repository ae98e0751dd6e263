# Every third-party dependency is found here and nowhere else (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(CUDAToolkit 12.0 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(OpenSSL REQUIRED)  # libcrypto: SHA-256 content hashes
find_package(CURL REQUIRED)     # llm/: chat clients over HTTP

if(KFORGE_CUTLASS_DIR STREQUAL "")
    file(GLOB _kforge_cutlass_candidates
         "${CMAKE_CURRENT_SOURCE_DIR}/.venv/lib/python3*/site-packages/cutlass_library/source/include")
    list(LENGTH _kforge_cutlass_candidates _n)
    if(_n GREATER 0)
        list(GET _kforge_cutlass_candidates 0 _dir)
        set(KFORGE_CUTLASS_DIR "${_dir}" CACHE PATH "CUTLASS include directory" FORCE)
    endif()
endif()
if(KFORGE_CUTLASS_DIR STREQUAL "")  # else the nvidia-cutlass package of the Python CMake finds
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(Python3_Interpreter_FOUND)
        execute_process(
            COMMAND "${Python3_EXECUTABLE}" -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))"
            OUTPUT_VARIABLE _dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
        if(_rc EQUAL 0 AND EXISTS "${_dir}/cutlass/cutlass.h")
            set(KFORGE_CUTLASS_DIR "${_dir}" CACHE PATH "CUTLASS include directory" FORCE)
        endif()
    endif()
endif()
# The configured path is only the run-time lookup's last resort (common/install_paths.h), but the
# tests compile CUTLASS kernels, so they need it.
if(NOT EXISTS "${KFORGE_CUTLASS_DIR}/cutlass/cutlass.h")
    if(KFORGE_BUILD_TESTS)
        message(FATAL_ERROR "CUTLASS headers not found (KFORGE_CUTLASS_DIR='${KFORGE_CUTLASS_DIR}'); run scripts/setup.sh")
    endif()
    message(WARNING "CUTLASS headers not found at build time: kforge looks for them at run time "
                    "($KFORGE_CUTLASS_DIR, or the nvidia-cutlass package beside the binary)")
else()
    message(STATUS "kforge: CUTLASS headers at ${KFORGE_CUTLASS_DIR}")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/Ccache.cmake)
