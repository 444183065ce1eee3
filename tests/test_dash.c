#include "test.h"
TEST_IMPL(dash_api) { fleet_test_skip("not written yet"); return 0; }
TEST_IMPL(dash_chromium) { fleet_test_skip("not written yet"); return 0; }
