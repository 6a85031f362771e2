// Redis' own C client, hiredis (Debian libhiredis-dev, Homebrew hiredis): only the blocking
// API (connect, redisCommandArgv, pipelined redisAppendCommandArgv + redisGetReply).
#include <hiredis/hiredis.h>
