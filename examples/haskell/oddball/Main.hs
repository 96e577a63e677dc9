{-# LANGUAGE CPP #-}
-- | oddball: sums random numbers in a deliberately space-hungry way, so
-- that its heap profile is interesting to watch.
--
-- Every round it picks a count n, emits the user marker
-- @Summing <n> numbers@ ('traceMarkerIO'), sums n pseudo-random Integers
-- in [-1000, 1000] with a lazy right fold (the whole list and a chain of
-- thunks stay live until the end), emits the user message @Sum: <s>@
-- ('traceEventIO'), collects the garbage ('performMajorGC') and sleeps.
--
-- Usage: oddball [ROUNDS [DELAY_MS [MAX_N [SEED [PINGS [BOUND]]]]]]
--   ROUNDS    number of rounds, 0 = forever (default 0)
--   DELAY_MS  pause between rounds in milliseconds (default 1000)
--   MAX_N     largest count per round, at least 1000 (default 2000000)
--   SEED      seed of the random numbers (default 42)
--   PINGS     MVar round trips per round between two threads on each
--             capability (default 0). Their scheduler events (+RTS -l)
--             fill GHC 9.0's 2 MiB per-capability eventlog buffers, which
--             that GHC writes out only when full (it has no
--             --eventlog-flush-interval): with PINGS in the thousands
--             the capabilities' events stream while the program runs.
--   BOUND     bound threads (forkOS) started per round (default 0). Each
--             writes task events into the RTS's global eventlog buffer,
--             which also holds the heap census samples and the wall-clock
--             time; GHC 9.0 writes that buffer only when its 2 MiB are
--             full (or at exit): a few thousand per round make it stream.
--
-- Built with the cabal flag @eventlog-socket@ (the default), the program
-- starts eventlog-socket from the environment (GHC_EVENTLOG_UNIX_PATH, or
-- GHC_EVENTLOG_INET_HOST + GHC_EVENTLOG_INET_PORT, and GHC_EVENTLOG_WAIT).
-- Built with plain GHC (no CPP flag) it writes the eventlog the usual way
-- (+RTS -l, -ol FILE).
module Main (main) where

import Control.Concurrent
  (forkOS, forkOn, getNumCapabilities, threadDelay)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Monad (forM, replicateM_, unless, when)
import Data.Bits (shiftR)
import Data.Word (Word64)
import Debug.Trace (traceEventIO, traceMarkerIO)
import System.Environment (getArgs)
import System.IO (BufferMode (LineBuffering), hSetBuffering, stdout)
import System.Mem (performMajorGC)
import Text.Read (readMaybe)

#ifdef USE_EVENTLOG_SOCKET
import qualified GHC.Eventlog.Socket as EventlogSocket
#endif

-- | State of a 64-bit linear congruential generator (Knuth's MMIX
-- constants). Good enough for picking sizes and summands.
newtype Gen = Gen Word64

step :: Gen -> (Word64, Gen)
step (Gen s) = (s' `shiftR` 33, Gen s')
  where
    s' = s * 6364136223846793005 + 1442695040888963407

-- | A number in the inclusive range [lo, hi].
uniform :: (Int, Int) -> Gen -> (Int, Gen)
uniform (lo, hi) g = (lo + fromIntegral (x `mod` span'), g')
  where
    (x, g') = step g
    span' = fromIntegral (hi - lo + 1) :: Word64

-- | An infinite lazy list of numbers in [lo, hi].
uniforms :: (Int, Int) -> Gen -> [Integer]
uniforms r g = let (x, g') = uniform r g in toInteger x : uniforms r g'

data Opts = Opts
  { optRounds :: Int
  , optDelayMs :: Int
  , optMaxN :: Int
  , optSeed :: Word64
  , optPings :: Int
  , optBound :: Int
  }

parseOpts :: [String] -> Either String Opts
parseOpts args = case args of
  [] -> Right defaults
  [r] -> build r "1000" "2000000" "42" "0" "0"
  [r, d] -> build r d "2000000" "42" "0" "0"
  [r, d, m] -> build r d m "42" "0" "0"
  [r, d, m, s] -> build r d m s "0" "0"
  [r, d, m, s, p] -> build r d m s p "0"
  [r, d, m, s, p, b] -> build r d m s p b
  _ -> Left "too many arguments"
  where
    defaults = Opts 0 1000 2000000 42 0 0
    build r d m s p b =
      case (readMaybe r, readMaybe d, readMaybe m, readMaybe s,
            readMaybe p, readMaybe b) of
        (Just r', Just d', Just m', Just s', Just p', Just b')
          | r' >= 0 && d' >= 0 && m' >= 1000 && p' >= 0 && b' >= 0 ->
              Right (Opts r' d' m' s' p' b')
        _ -> Left ("ROUNDS, DELAY_MS, MAX_N, SEED, PINGS and BOUND must"
                   ++ " be numbers (ROUNDS >= 0, DELAY_MS >= 0,"
                   ++ " MAX_N >= 1000, PINGS >= 0, BOUND >= 0)")

main :: IO ()
main = do
  args <- getArgs
  case parseOpts args of
    Left err -> ioError (userError ("oddball: " ++ err ++
      "\nusage: oddball [ROUNDS [DELAY_MS [MAX_N [SEED [PINGS [BOUND]]]]]]"))
    Right opts -> do
#ifdef USE_EVENTLOG_SOCKET
      EventlogSocket.startFromEnv
#endif
      hSetBuffering stdout LineBuffering
      loop opts 1 (Gen (optSeed opts))

loop :: Opts -> Int -> Gen -> IO ()
loop opts i g0 = do
  let (n, g1) = uniform (1000, optMaxN opts) g0
      (_, g2) = step g1
  traceMarkerIO ("Summing " ++ show n ++ " numbers")
  putStrLn ("Generating " ++ show n ++ " random numbers")
  -- A right fold keeps every summand and every (+) thunk alive until the
  -- end: the heap grows with n and collapses afterwards.
  let total = foldr (+) 0 (take n (uniforms (-1000, 1000) g1))
  total `seq` traceEventIO ("Sum: " ++ show total)
  putStrLn ("Sum: " ++ show total)
  -- The summands are garbage now: collect them, so the heap graph drops
  -- (with +RTS -i0 every major GC is also a heap census).
  performMajorGC
  chatter (optPings opts)
  bound (optBound opts)
  let finished = optRounds opts /= 0 && i >= optRounds opts
  unless finished $ do
    threadDelay (optDelayMs opts * 1000)
    loop opts (i + 1) g2

-- | On every capability, a thread and a partner forked on the same
-- capability pass a token back and forth through two MVars, n round trips
-- each; returns when all are done. Each hand-over blocks one thread and
-- wakes the other: scheduler events in that capability's eventlog buffer.
chatter :: Int -> IO ()
chatter n = when (n > 0) $ do
  caps <- getNumCapabilities
  dones <- forM [0 .. caps - 1] $ \cap -> do
    done <- newEmptyMVar
    _ <- forkOn cap (pingPong cap n >> putMVar done ())
    return done
  mapM_ takeMVar dones

pingPong :: Int -> Int -> IO ()
pingPong cap n = do
  ping <- newEmptyMVar
  pong <- newEmptyMVar
  _ <- forkOn cap (replicateM_ n (takeMVar ping >>= putMVar pong))
  replicateM_ n (putMVar ping () >> takeMVar pong)

-- | Start n bound threads (each on its own OS thread) that do nothing, and
-- wait for them all.
bound :: Int -> IO ()
bound n = when (n > 0) $ do
  dones <- forM [1 .. n] $ \_ -> do
    done <- newEmptyMVar
    _ <- forkOS (putMVar done ())
    return done
  mapM_ takeMVar dones
