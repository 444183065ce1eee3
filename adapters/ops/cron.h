/* ops/cron.h -- the backend ops of the cron scheduler, XX(ID, name,
 * command) as in FLEET__OP_MAP (adapters/backend.h), with KEYS, ARGV and
 * reply. docs/cron.md has the key schema and the reasons.
 *
 * Registry ops get the registry's tag R = "{<prefix>:<namespace>}" as
 * KEYS[1]: R:cron:defs (hash key -> created ms), R:cron:def:<key> (hash:
 * expr, tz, payload, queue, catch_up, catch_up_max, catch_up_window, meta,
 * enabled, created, updated, from), R:cron:last (hash key ->
 * "<fire_ms>:<token>:<node>"), R:cron:rev (the revision, INCR on every
 * change) and the channel R:cron:changed (the new revision). Occurrence
 * ops get the tag T of a definition's occurrences: the target queue's tag
 * "{<prefix>:<queue>}" for a queue-targeted definition, else
 * "{<prefix>:<namespace>:<key>}"; their keys are T:cron:<ns>:<key>:occ,
 * :ent, :fence, :top and :floor (lib/cron_occ.lua). Times are ms on the
 * server clock (TIME).
 *
 * CRON_FIRE is a fenced op: it takes one ARGV more than listed here, last,
 * the failover epoch, which the adapter appends when it writes the command
 * (adapters/backend.h, "Fenced ops"); its occurrence tokens come from
 * :fence through lib/fence.lua, so that they never repeat or go back
 * across a failover.
 *
 *   CRON_DEFINE  KEYS: R. ARGV: key, mode ("create", "update", "upsert"),
 *       expr, tz, payload, queue ("" for none), catch_up ("skip",
 *       "latest", "all"), catch_up_max, catch_up_window_ms, metadata,
 *       enabled ("1"/"0"). Reply: {1 created / 0 updated, revision}.
 *       Errors: FLEET_EEXIST (create), FLEET_ENOTFOUND (update).
 *   CRON_SET  KEYS: R. ARGV: key, enabled. Reply: {1 changed / 0 already
 *       so, revision}. Error: FLEET_ENOTFOUND.
 *   CRON_REMOVE  KEYS: R. ARGV: key. Reply: the revision. Error:
 *       FLEET_ENOTFOUND.
 *   CRON_LIST  KEYS: R. ARGV: key or "" for all. Reply: {revision, now,
 *       then per definition: key, {field, value, ...}, last record or ""}.
 *   CRON_REV  KEYS: R. ARGV: none. Reply: {revision, now}.
 *   CRON_MARK  KEYS: R. ARGV: key, fire_ms, token, node. Keeps the latest
 *       fire as the registry's "last fired" hint. Reply: 1 written, 0 not.
 *   CRON_FIRE  KEYS: T. ARGV: ns, key, node, keep_count, keep_age_ms,
 *       min_token, queue ("1": enqueue "<key>@<fire_ms>" in T), payload,
 *       n, then n pairs (fire_ms, "f" fire or "m" log as missed). Reply:
 *       {now, then status, token per pair}: -1 not due yet, 0 logged
 *       already (or at or before the trim floor), 1 fired (token), 2
 *       logged as missed.
 *   CRON_COMPLETE  KEYS: T. ARGV: ns, key, fire_ms, token, outcome.
 *       Reply: 1 recorded, 2 recorded before, 0 stale token, -1 no entry.
 *   CRON_HISTORY  KEYS: T. ARGV: ns, key, limit. Reply: {top fire_ms (-1:
 *       none), then per entry newest first: fire_ms, token, node,
 *       dispatched_ms, finished_ms, outcome}. */
#ifndef FLEET_OPS_CRON_H
#define FLEET_OPS_CRON_H

#define FLEET__OPS_CRON(XX)                                                    \
  XX(CRON_DEFINE, "cron_define", NULL)                                         \
  XX(CRON_SET, "cron_set", NULL)                                               \
  XX(CRON_REMOVE, "cron_remove", NULL)                                         \
  XX(CRON_LIST, "cron_list", NULL)                                             \
  XX(CRON_REV, "cron_rev", NULL)                                               \
  XX(CRON_MARK, "cron_mark", NULL)                                             \
  XX(CRON_FIRE, "cron_fire", NULL)                                             \
  XX(CRON_COMPLETE, "cron_complete", NULL)                                     \
  XX(CRON_HISTORY, "cron_history", NULL)

#endif /* FLEET_OPS_CRON_H */
