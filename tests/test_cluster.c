/* test_cluster.c -- the Redis Cluster backend: hash slots, routing from a
 * seed that owns nothing of a queue, locks in many slots renewed in one
 * client, per-slot batches. Failover and resharding under load are in
 * test_cluster_mp.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cluster_fixture.h"
#include "test.h"

/* fleet__key_slot() against values Redis documents or computes: CRC16 of
 * "123456789" is 0x31C3, and the hash-tag rules of the cluster spec. */
TEST_IMPL(cluster_slot_unit) {
  ASSERT_UEQ(0x31C3 & 16383, fleet__key_slot("123456789", 9));
  ASSERT_UEQ(12182, fleet__key_slot("foo", 3));
  ASSERT_UEQ(5061, fleet__key_slot("bar", 3));
  /* The tag decides: same slot as the bare tag content. */
  ASSERT_UEQ(fleet__key_slot("user1000", 8),
             fleet__key_slot("{user1000}.following", 20));
  ASSERT_UEQ(fleet__key_slot("user1000", 8),
             fleet__key_slot("{user1000}.followers", 20));
  /* An empty tag "{}" means the whole key is hashed. */
  ASSERT_UEQ(fleet__key_slot("foo{}{bar}", 10),
             fleet__key_slot("foo{}{bar}", 10));
  ASSERT_NE(fleet__key_slot("foo{}{bar}", 10), fleet__key_slot("bar", 3));
  /* Only the first '{' and the next '}' count. */
  ASSERT_UEQ(fleet__key_slot("{bar", 4), fleet__key_slot("foo{{bar}}zap", 13));
  ASSERT_UEQ(fleet__key_slot("bar", 3), fleet__key_slot("foo{bar}{zap}", 13));
  /* No closing brace: the whole key. */
  ASSERT_UEQ(fleet__key_slot("a{b", 3), fleet__key_slot("a{b", 3));
  ASSERT_NE(fleet__key_slot("a{b", 3), fleet__key_slot("b", 1));
  ASSERT_UEQ(0, fleet__key_slot("", 0));
  return 0;
}
