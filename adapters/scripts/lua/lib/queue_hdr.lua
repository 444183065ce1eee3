-- queue_hdr.lua -- included by the scripts that add jobs (lib/queue_add.lua)
-- and those that read a job's record whole (queue_get.lua,
-- queue_admin_jobs.lua) (--#include queue_hdr): a job's headers
-- (docs/queue.md, "Headers and tracing"). They come as the ext item "h" of
-- an enqueue, "<key>=<value>" items separated by "\t", which the client
-- checked (keys of [A-Za-z0-9._-], values without control characters),
-- and are stored in the job's record after its created time: the record's
-- third field is "<created_ms>\t<headers>" for a job with headers, and
-- "<created_ms>" for one without. So they go wherever the record goes (a
-- claim's reply, a delivery, a retry, which rewrites only the attempts
-- before it) and are deleted with it, and a job without headers costs no
-- key, no command and no byte more. Expects nothing before it.

-- The most bytes of a job's headers (FLEET_JOB_HEADERS_BYTES_MAX).
local HDR_MAX = 4096

-- The middle "\0<created_ms>\t<headers>\0" of the record of a job whose
-- ext item h is `h` (nil: none, then nil), `now_s` the created time in
-- decimal. Raises FLEET_EINVAL for headers fleet does not store: empty,
-- over HDR_MAX bytes, or holding a NUL byte, which would cut the record.
local function hdr_created(h, now_s)
  if not h then return nil end
  if h == '' or #h > HDR_MAX or string.find(h, '\0', 1, true) then
    error({err = 'FLEET_EINVAL ext item h (headers) is empty, over ' ..
               HDR_MAX .. ' bytes or holds a NUL byte'})
  end
  return '\0' .. now_s .. '\t' .. h .. '\0'
end

-- The created time (a string) and the headers ('' when none) of a
-- record's third field `f`.
local function hdr_split(f)
  local p = string.find(f, '\t', 1, true)
  if not p then return f, '' end
  return string.sub(f, 1, p - 1), string.sub(f, p + 1)
end
