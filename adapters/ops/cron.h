/* ops/cron.h -- what the cron scheduler's scripts share (the scripts
 * adapters/scripts/lua/cron_*.lua: each one's header states its KEYS, ARGV
 * and reply; docs/cron.md has the key schema and the reasons).
 *
 * Registry ops get the registry's tag R = "{<prefix>:<namespace>}" as
 * KEYS[1]: R:cron:defs (hash key -> created ms), R:cron:def:<key> (hash:
 * expr, tz, payload, queue, catch_up, catch_up_max, catch_up_window, meta,
 * enabled, created, updated, from, start, end, max_fires, pool, and the
 * hints fired and done), R:cron:last (hash key ->
 * "<fire_ms>:<token>:<node>"), R:cron:rev (the revision, INCR on every
 * change) and the channel R:cron:changed (the new revision). Occurrence
 * ops (cron_fire, cron_complete, cron_history) get the tag T of a
 * definition's occurrences: the target queue's tag "{<prefix>:<queue>}"
 * for a queue-targeted definition, else "{<prefix>:<namespace>:<key>}";
 * their keys are T:cron:<ns>:<key>:occ, :ent, :fence, :top, :floor,
 * :fired (the fire limit's count) and :pend (a pool definition's claimed,
 * undispatched occurrences)
 * (lib/cron_occ.lua). Times are ms on the server clock (TIME).
 *
 * CRON_FIRE is a fenced op (adapters/backend.h, "Fenced ops"). */
