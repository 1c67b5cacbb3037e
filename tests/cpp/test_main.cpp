// The doctest runner of headlab_tests: every tests/cpp/test_*.cpp adds its cases to it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
