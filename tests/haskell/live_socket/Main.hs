{-# LANGUAGE CPP #-}
-- | live_socket: the instrumented program of eventlog-live's end-to-end
-- tests with a real producer (tests/e2e/test_producer_*.sh).
--
-- It runs for SECONDS seconds. Once a second (i = 1..SECONDS, at start + i
-- seconds) it emits the user marker @<TAG> tick <i>@ ('traceMarkerIO') and
-- prints on stdout the wall-clock Unix time in nanoseconds at which it did:
--
-- > start <unix_ns> <pid>
-- > marker <i> <unix_ns> <TAG> tick <i>
-- > control <namespace> <id> <unix_ns> <TAG> <namespace> <id> handled <n>
-- > end <unix_ns>
--
-- (@end@ is printed just before main returns, i.e. before the RTS writes
-- its last eventlog buffers.) That stdout is the tests' independent
-- channel: what the daemon exports is checked against it.
--
-- Meanwhile a worker passes a token between two threads through MVars
-- (WORK round trips every 100 ms; each hand-over is a thread switch,
-- i.e. scheduler events) and allocates a list that does not fuse away, so
-- minor GCs (HEAP_SIZE, HEAP_ALLOCATED events) happen every tick. GHC 9.0
-- has no --eventlog-flush-interval: a capability's 2 MiB buffer reaches the
-- reader only when full, so WORK is what makes the stream live (the default
-- fills a buffer every few seconds, see tests/e2e/producer_lib.sh).
-- A major GC (HEAP_LIVE) runs after every marker.
--
-- Built with -DUSE_EVENTLOG_SOCKET (tests/e2e/producer_lib.sh, through
-- ../shared/peers/eventlog-socket/build-ghc90.sh) it streams its eventlog
-- through the real eventlog-socket library and registers the control
-- namespace "live-test" with two commands (the library loops forever on a
-- third command in one namespace): 1 and 2 answer with the user message
-- @<TAG> live-test <id> handled <n>@ ('traceEventIO'; n counts the
-- commands handled) and the "control" line on stdout.
--
-- Usage: live_socket [KEY=VALUE...]
--   addr=unix:PATH | tcp:HOST:PORT | none   (default none: a plain program,
--                  +RTS -l [-ol FILE]; the only choice without the library)
--   seconds=N      markers 1..N, one a second (default 30)
--   tag=TEXT       marker prefix, tells runs apart (default live)
--   work=N         MVar round trips per 100 ms (default 1500)
--   alloc=N        list cells allocated per 100 ms (default 20000)
--   census=end     before exiting, request heap censuses in a loop until
--                  about 4 MiB of samples went into the RTS's global
--                  eventlog buffer, so that it is written out while the
--                  program still runs (needs the library's GHC 9.0 compat
--                  requestHeapCensus, an -h mode and an eventlog)
--   census=start   the same right after starting (so that the startup
--                  events, WALL_CLOCK_TIME among them, reach a -ol reader
--                  at once: a control experiment, docs/testing.md)
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar
import Control.Exception (evaluate)
import Control.Monad (forM_, forever, replicateM_, when)
import Data.IORef
import Data.Time.Clock.POSIX (getPOSIXTime)
import Debug.Trace (traceEventIO, traceMarkerIO)
import System.Environment (getArgs)
import System.Exit (die)
import System.IO
import System.Mem (performMajorGC)
import System.Posix.Process (getProcessID)
import Text.Read (readMaybe)

#ifdef USE_EVENTLOG_SOCKET
import qualified GHC.Eventlog.Socket as ES

foreign import ccall unsafe "requestHeapCensus" c_requestHeapCensus :: IO ()
#endif

data Opts = Opts
  { optAddr :: String
  , optSeconds :: Int
  , optTag :: String
  , optWork :: Int
  , optAlloc :: Int
  , optCensus :: String
  }

parseOpts :: [String] -> Either String Opts
parseOpts = go (Opts "none" 30 "live" 1500 20000 "none")
  where
    go o [] = Right o
    go o (a : as) = case break (== '=') a of
      ("addr", '=' : v) -> go o {optAddr = v} as
      ("tag", '=' : v) -> go o {optTag = v} as
      ("seconds", '=' : v) -> num v >>= \n -> go o {optSeconds = n} as
      ("work", '=' : v) -> num v >>= \n -> go o {optWork = n} as
      ("alloc", '=' : v) -> num v >>= \n -> go o {optAlloc = n} as
      ("census", '=' : v)
        | v `elem` ["none", "start", "end"] -> go o {optCensus = v} as
      _ -> Left ("unknown argument " ++ show a)
    num v = maybe (Left ("not a number: " ++ v)) Right (readMaybe v)

-- | Wall-clock time, ns since the Unix epoch.
unixNs :: IO Integer
unixNs = do
  t <- getPOSIXTime
  return (floor (toRational t * 1000000000))

say :: String -> IO ()
say s = putStrLn s >> hFlush stdout

main :: IO ()
main = do
  args <- getArgs
  opts <- either (\e -> die ("live_socket: " ++ e)) return (parseOpts args)
  hSetBuffering stdout LineBuffering
  handled <- newIORef (0 :: Int)
  startSocket opts handled
  when (optCensus opts == "start") censusBurst
  t0 <- unixNs
  pid <- getProcessID
  say ("start " ++ show t0 ++ " " ++ show pid)
  _ <- forkIO (worker (optWork opts) (optAlloc opts))
  forM_ [1 .. optSeconds opts] $ \i -> do
    now <- unixNs
    let deadline = t0 + fromIntegral i * 1000000000
    when (deadline > now) $
      threadDelay (fromIntegral ((deadline - now) `div` 1000))
    let text = optTag opts ++ " tick " ++ show i
    t <- unixNs
    traceMarkerIO text
    say ("marker " ++ show i ++ " " ++ show t ++ " " ++ text)
    performMajorGC
  when (optCensus opts == "end") censusBurst
  t1 <- unixNs
  say ("end " ++ show t1)

-- | MVar ping-pong (scheduler events) and allocation, every 100 ms.
worker :: Int -> Int -> IO ()
worker work alloc = do
  ping <- newEmptyMVar
  pong <- newEmptyMVar
  _ <- forkIO (forever (takeMVar ping >>= putMVar pong))
  forever $ do
    replicateM_ work (putMVar ping () >> takeMVar pong)
    -- 'reverse' keeps the list from fusing away: alloc cons cells.
    _ <- evaluate (sum (reverse [1 .. alloc]))
    threadDelay 100000

startSocket :: Opts -> IORef Int -> IO ()
#ifdef USE_EVENTLOG_SOCKET
startSocket opts handled = case optAddr opts of
  "none" -> return ()
  addr -> do
    ns <- ES.registerNamespace "live-test"
    forM_ [1, 2] $ \cid ->
      ES.registerCommand ns (ES.CommandId cid) (answer cid)
    a <- parseAddr addr
    ES.startWith a ES.defaultEventlogSocketOpts
  where
    answer cid = do
      n <- atomicModifyIORef' handled (\k -> (k + 1, k + 1))
      let msg = optTag opts ++ " live-test " ++ show cid ++ " handled " ++ show n
      t <- unixNs
      traceEventIO msg
      say ("control live-test " ++ show cid ++ " " ++ show t ++ " " ++ msg)
    parseAddr s = case break (== ':') s of
      ("unix", ':' : path) -> return (ES.EventlogSocketUnixAddr path)
      ("tcp", ':' : hp) ->
        let (h, p) = breakLast hp
         in return (ES.EventlogSocketInetAddr h p)
      _ -> die ("live_socket: bad addr " ++ show s)
    breakLast hp =
      let (p, h) = break (== ':') (reverse hp)
       in (reverse (drop 1 h), reverse p)
#else
startSocket opts _ = case optAddr opts of
  "none" -> return ()
  a -> die ("live_socket: built without eventlog-socket, addr " ++ a)
#endif

-- | Heap censuses in a burst: each writes its samples into the RTS's
-- global eventlog buffer (GHC 9.0 writes that buffer only when its 2 MiB
-- are full, or at exit). 1500 of them (about 4 MiB of samples with -hT,
-- about 2.8 KiB each; more with -hy in a profiled build) make it reach
-- the reader before the program exits.
censusBurst :: IO ()
#ifdef USE_EVENTLOG_SOCKET
censusBurst = replicateM_ 1500 (c_requestHeapCensus >> performMajorGC)
#else
censusBurst = return ()
#endif
