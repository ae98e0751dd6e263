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
if(NOT EXISTS "${KFORGE_CUTLASS_DIR}/cutlass/cutlass.h")
    message(FATAL_ERROR "CUTLASS headers not found (KFORGE_CUTLASS_DIR='${KFORGE_CUTLASS_DIR}'); run scripts/setup.sh")
endif()
message(STATUS "kforge: CUTLASS headers at ${KFORGE_CUTLASS_DIR}")
