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
-- Usage: oddball [ROUNDS [DELAY_MS [MAX_N [SEED]]]]
--   ROUNDS    number of rounds, 0 = forever (default 0)
--   DELAY_MS  pause between rounds in milliseconds (default 1000)
--   MAX_N     largest count per round, at least 1000 (default 2000000)
--   SEED      seed of the random numbers (default 42)
--
-- Built with the cabal flag @eventlog-socket@ (the default), the program
-- starts eventlog-socket from the environment (GHC_EVENTLOG_UNIX_PATH, or
-- GHC_EVENTLOG_INET_HOST + GHC_EVENTLOG_INET_PORT, and GHC_EVENTLOG_WAIT).
-- Built with plain GHC (no CPP flag) it writes the eventlog the usual way
-- (+RTS -l, -ol FILE).
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (unless)
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
  }

parseOpts :: [String] -> Either String Opts
parseOpts args = case args of
  [] -> Right defaults
  [r] -> build r "1000" "2000000" "42"
  [r, d] -> build r d "2000000" "42"
  [r, d, m] -> build r d m "42"
  [r, d, m, s] -> build r d m s
  _ -> Left "too many arguments"
  where
    defaults = Opts 0 1000 2000000 42
    build r d m s =
      case (readMaybe r, readMaybe d, readMaybe m, readMaybe s) of
        (Just r', Just d', Just m', Just s')
          | r' >= 0 && d' >= 0 && m' >= 1000 -> Right (Opts r' d' m' s')
        _ -> Left ("ROUNDS, DELAY_MS, MAX_N and SEED must be numbers"
                   ++ " (ROUNDS >= 0, DELAY_MS >= 0, MAX_N >= 1000)")

main :: IO ()
main = do
  args <- getArgs
  case parseOpts args of
    Left err -> ioError (userError ("oddball: " ++ err ++
      "\nusage: oddball [ROUNDS [DELAY_MS [MAX_N [SEED]]]]"))
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
  let finished = optRounds opts /= 0 && i >= optRounds opts
  unless finished $ do
    threadDelay (optDelayMs opts * 1000)
    loop opts (i + 1) g2
