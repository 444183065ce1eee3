/* test_cron_mp.c -- placeholder replaced below. */
#include "test.h"
TEST_IMPL(cron_mp_once) { return 0; }
TEST_IMPL(cron_mp_aof_restart) { return 0; }
TEST_IMPL(cron_mp_catch_up) { return 0; }
TEST_IMPL(cron_mp_demo_input) { return 0; }
