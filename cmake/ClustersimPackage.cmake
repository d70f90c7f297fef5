# Install rules and the Debian package (`make deb`: CPack's DEB generator). The package holds the CLI, the
# GUI, the Python module (for Debian's python3) and the shipped scenarios under /usr/share/clustersim; its
# library dependencies come from dpkg-shlibdeps. The CUDA harness is left out: it links the CUDA toolkit and
# NCCL, which are not Debian packages; build it on the GPU machine (calibrate/bench/README.md).
include(GNUInstallDirs)
install(TARGETS clustersim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET clustersim-gui)
  install(TARGETS clustersim-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET _clustersim)
  install(TARGETS _clustersim LIBRARY DESTINATION lib/python3/dist-packages/clustersim)
  install(FILES ${PROJECT_SOURCE_DIR}/sim/python/clustersim/__init__.py DESTINATION lib/python3/dist-packages/clustersim)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/clustersim/scenarios
        FILES_MATCHING PATTERN "*.json")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME clustersim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "clustersim developers <clustersim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "discrete-event performance simulator for distributed deep-learning training")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(TARGET _clustersim)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${CLUSTERSIM_PYTHON_VERSION}), python3 (<< ${CLUSTERSIM_PYTHON_VERSION}.999)")
endif()
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/package)
include(CPack)
