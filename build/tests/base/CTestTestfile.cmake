# CMake generated Testfile for 
# Source directory: /work/main/tests/base
# Build directory: /work/main/build/tests/base
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[base]=] "/work/main/build/tests/base/test_base")
set_tests_properties([=[base]=] PROPERTIES  _BACKTRACE_TRIPLES "/work/main/tests/base/CMakeLists.txt;3;add_test;/work/main/tests/base/CMakeLists.txt;0;")
