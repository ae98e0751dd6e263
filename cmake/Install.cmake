# Install rules: a relocatable tree that runs wherever it is moved (common/install_paths.h finds
# the data next to the binary at run time: <prefix>/bin/kforge -> <prefix>/share/kforge).
#
#   bin/kforge
#   share/kforge/kernels/*.cuh          kforge's CUDA templates (generated sources include them)
#   share/kforge/codegen/host_abi.h     the host parameter ABI of generated host code
#   share/kforge/python/kforge_py/      the Python side (importer, baselines)
#
# CUTLASS is not copied: it is found at run time ($KFORGE_CUTLASS_DIR, the nvidia-cutlass package
# of the Python environment kforge is installed in, or the configured KFORGE_CUTLASS_DIR).
# Under scikit-build-core (pip install .) the binary goes to the environment's bin/ and the data
# to its share/kforge, the same layout.
if(SKBUILD)
    set(KFORGE_INSTALL_BINDIR "${SKBUILD_SCRIPTS_DIR}")
    set(KFORGE_INSTALL_DATADIR "${SKBUILD_DATA_DIR}/share/kforge")
else()
    set(KFORGE_INSTALL_BINDIR bin)
    set(KFORGE_INSTALL_DATADIR share/kforge)
endif()

install(TARGETS kforge_cli RUNTIME DESTINATION "${KFORGE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/kernels/" DESTINATION "${KFORGE_INSTALL_DATADIR}/kernels"
        FILES_MATCHING PATTERN "*.cuh")
install(FILES "${PROJECT_SOURCE_DIR}/codegen/host_abi.h"
        DESTINATION "${KFORGE_INSTALL_DATADIR}/codegen")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/kforge_py"
        DESTINATION "${KFORGE_INSTALL_DATADIR}/python"
        PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
