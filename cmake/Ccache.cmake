# ccache for the C++ compiles, set once when a build folder is first configured (never on a
# reconfigure: a new compiler launcher would rebuild everything). Relative to the source tree and
# without the build folder's path in the hash, so another build folder of this tree at the same
# depth (build/ci and build/wheel, the pip build) gets cache hits for the same flags.
# -DKFORGE_CCACHE=OFF, or no ccache installed, leaves the compiler alone.
option(KFORGE_CCACHE "Compile through ccache when it is installed (first configure only)" ON)
if(KFORGE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER
   AND NOT EXISTS "${CMAKE_BINARY_DIR}/CMakeCache.txt")
    find_program(KFORGE_CCACHE_PROGRAM ccache)
    if(KFORGE_CCACHE_PROGRAM)
        set(CMAKE_CXX_COMPILER_LAUNCHER
            "${CMAKE_COMMAND};-E;env;CCACHE_BASEDIR=${PROJECT_SOURCE_DIR};CCACHE_NOHASHDIR=true;${KFORGE_CCACHE_PROGRAM}"
            CACHE STRING "C++ compiler launcher (cmake/Ccache.cmake)")
        message(STATUS "kforge: compiling through ${KFORGE_CCACHE_PROGRAM}")
    endif()
endif()
