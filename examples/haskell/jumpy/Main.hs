{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE CPP #-}
-- | jumpy: a random walk through mutually recursive functions, for
-- cost-centre profiling (build with -prof -fprof-auto, run with +RTS -p -l).
--
-- Each round emits the user marker @Jumping round <i>@, then walks: every
-- function jump0 .. jump5 does some work of its own size and calls a
-- randomly chosen next function (jump5 is rare and ends the walk, as does a
-- depth limit), so the cost-centre stacks are deep and varied and the flame
-- graph has distinct widths per function. The round ends with the user
-- message @Round <i>: <result>@.
--
-- Usage: jumpy [ROUNDS [DELAY_MS [SEED]]]
--   ROUNDS    number of rounds, 0 = forever (default 0)
--   DELAY_MS  pause between rounds in milliseconds (default 100)
--   SEED      seed of the walk (default 7)
--
-- With the cabal flag eventlog-socket (default) it starts eventlog-socket
-- from the environment, like oddball.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Monad (unless)
import Data.Bits (shiftR)
import Data.List (foldl')
import Data.Word (Word64)
import Debug.Trace (traceEventIO, traceMarkerIO)
import System.Environment (getArgs)
import System.IO (BufferMode (LineBuffering), hSetBuffering, stdout)
import Text.Read (readMaybe)

#ifdef USE_EVENTLOG_SOCKET
import qualified GHC.Eventlog.Socket as EventlogSocket
#endif

newtype Gen = Gen Word64

step :: Gen -> (Int, Gen)
step (Gen s) = (fromIntegral (s' `shiftR` 33), Gen s')
  where
    s' = s * 6364136223846793005 + 1442695040888963407

maxDepth :: Int
maxDepth = 40

-- | Busy work proportional to k.
work :: Int -> Int
work k = foldl' (\a x -> (a * 31 + x) `mod` 1000003) 0 [1 .. k]
{-# NOINLINE work #-}

-- | Pick the next function: 0..4 are common, 5 (the end) is rare.
next :: Int -> Gen -> Int
next depth g
  | depth >= maxDepth = 5
  | otherwise = let (x, _) = step g in if x `mod` 16 == 0 then 5 else x `mod` 5

dispatch :: Int -> Int -> Gen -> Int
dispatch target depth g = case target of
  0 -> jump0 depth g
  1 -> jump1 depth g
  2 -> jump2 depth g
  3 -> jump3 depth g
  4 -> jump4 depth g
  _ -> jump5 depth g
{-# NOINLINE dispatch #-}

hop :: Int -> Int -> Gen -> Int
hop size depth g =
  let !w = work size
      (_, g') = step g
      !r = dispatch (next depth g') (depth + 1) g'
  in (w + r) `mod` 1000003
{-# NOINLINE hop #-}

jump0, jump1, jump2, jump3, jump4, jump5 :: Int -> Gen -> Int
jump0 depth g = hop 20000 depth g
{-# NOINLINE jump0 #-}
jump1 depth g = hop 40000 depth g
{-# NOINLINE jump1 #-}
jump2 depth g = hop 60000 depth g
{-# NOINLINE jump2 #-}
jump3 depth g = hop 80000 depth g
{-# NOINLINE jump3 #-}
jump4 depth g = hop 100000 depth g
{-# NOINLINE jump4 #-}
jump5 _ _ = work 10000
{-# NOINLINE jump5 #-}

parseOpts :: [String] -> Either String (Int, Int, Word64)
parseOpts args = case args of
  [] -> Right (0, 100, 7)
  [r] -> build r "100" "7"
  [r, d] -> build r d "7"
  [r, d, s] -> build r d s
  _ -> Left "too many arguments"
  where
    build r d s = case (readMaybe r, readMaybe d, readMaybe s) of
      (Just r', Just d', Just s') | r' >= 0 && d' >= 0 -> Right (r', d', s')
      _ -> Left "ROUNDS, DELAY_MS and SEED must be non-negative numbers"

main :: IO ()
main = do
  args <- getArgs
  case parseOpts args of
    Left err -> ioError (userError ("jumpy: " ++ err ++
      "\nusage: jumpy [ROUNDS [DELAY_MS [SEED]]]"))
    Right (rounds, delayMs, seed) -> do
#ifdef USE_EVENTLOG_SOCKET
      EventlogSocket.startFromEnv
#endif
      hSetBuffering stdout LineBuffering
      loop rounds delayMs 1 (Gen seed)

loop :: Int -> Int -> Int -> Gen -> IO ()
loop rounds delayMs i g = do
  traceMarkerIO ("Jumping round " ++ show i)
  let (x, g') = step g
      !r = dispatch (x `mod` 5) 0 g'
  traceEventIO ("Round " ++ show i ++ ": " ++ show r)
  putStrLn ("Round " ++ show i ++ ": " ++ show r)
  unless (rounds /= 0 && i >= rounds) $ do
    threadDelay (delayMs * 1000)
    loop rounds delayMs (i + 1) g'
