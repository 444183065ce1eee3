-- hash_mark.lua -- included by the libs of the primitives whose hashes
-- hold a field per job or per borrow (--#include hash_mark: queue_int,
-- pool_int, warmpool_int): HASH_MARK, the value of such a hash's field ""
-- (a name fleet never gives a job, a key or an id). Longer than the 64
-- bytes of Redis's hash-max-listpack-value, it keeps the hash a hash
-- table, whose lookups cost the same at any size, where a listpack (up
-- to hash-max-listpack-entries, 128, fields) is scanned field by field
-- at every lookup: a worker's 50 claims made that a sixth of a claim's
-- and completion's server time, and 50 pool dispatches in flight half of
-- a dispatch's. The writes that add entries to such a hash write it too;
-- readers skip it (a lookup by name never meets it), and a count of the
-- entries leaves it out.
local HASH_MARK =
  'fleet: this field keeps this hash a hash table (see docs/queue.md)'
