-- wrk script for scripts/bench-ingest: single listens to /1/submit-listens,
-- each request from one of the signed-in people whose tokens are in the
-- file $BENCH_TOKENS (one per line; the first $BENCH_PEOPLE are used),
-- their listens a second apart from an hour ago, as a player sends them.
-- wrk's $BENCH_THREADS threads split the people between them, so each
-- person's listens have times of their own. Prints one line in
-- ingest-bench's words, and writes how many were acknowledged (2xx) to the
-- file $BENCH_ACKED when it is set, for the script to compare with what
-- the store kept.

local label = os.getenv("BENCH_LABEL") or "server"
local people = tonumber(os.getenv("BENCH_PEOPLE") or "64")
local threadCount = tonumber(os.getenv("BENCH_THREADS") or "1")
local started = os.time() - 3600
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end

function init(args)
  mine = {}
  local n = 0
  for line in io.lines(os.getenv("BENCH_TOKENS")) do
    if n < people and n % threadCount == id then table.insert(mine, line) end
    n = n + 1
  end
  sent = 0
  run = string.format("%d-%d", os.time(), id)
end

function request()
  local token = mine[(sent % #mine) + 1]
  local instant = started + math.floor(sent / #mine)
  sent = sent + 1
  local body = string.format(
    '{"listen_type":"single","payload":[{"listened_at":%d,"track_metadata":{"artist_name":"Bench Artist","track_name":"%s s%d","release_name":"Bench Album"}}]}',
    instant, run, sent)
  return wrk.format("POST", "/1/submit-listens",
    { ["Authorization"] = "Token " .. token, ["Content-Type"] = "application/json" }, body)
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local failed = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  local accepted = summary.requests - failed
  io.write(string.format("%s: single listens, %d people at once (wrk): %d listens/s (%d in %d s), p50 %.2f ms, p99 %.2f ms\n",
    label, people, math.floor(accepted / seconds), accepted, math.floor(seconds + 0.5),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
  local acked = os.getenv("BENCH_ACKED")
  if acked then
    local file = assert(io.open(acked, "w"))
    file:write(string.format("%d\n", accepted))
    file:close()
  end
  if failed > 0 then
    io.write(string.format("%s: %d requests failed (answers other than 2xx: %d)\n", label, failed, summary.errors.status))
  end
end
