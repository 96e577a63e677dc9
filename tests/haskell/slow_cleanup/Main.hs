-- | slow_cleanup: a GHC program whose SIGINT handling takes time, for
-- tests/e2e/test_watch_group.sh. It prints "start <pid>", then writes a
-- user message every 10 ms until SIGINT (UserInterrupt); it then prints
-- "cleanup start", writes 20 more messages 100 ms apart (about 2 s: a
-- second SIGINT meanwhile makes GHC's RTS exit at once), prints
-- "cleanup done" and exits 0. Without SIGINT it ends after 60 s, exit 3.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Exception (AsyncException (UserInterrupt), throwIO, try)
import Control.Monad (forM_)
import Debug.Trace (traceEventIO)
import System.Exit (exitWith, ExitCode (ExitFailure))
import System.IO
import System.Posix.Process (getProcessID)

main :: IO ()
main = do
  hSetBuffering stdout LineBuffering
  pid <- getProcessID
  putStrLn ("start " ++ show pid)
  r <- try (forM_ [1 .. 6000 :: Int] $ \i -> do
              traceEventIO ("work " ++ show i)
              threadDelay 10000)
  case r of
    Left UserInterrupt -> do
      putStrLn "cleanup start"
      forM_ [1 .. 20 :: Int] $ \i -> do
        traceEventIO ("cleanup " ++ show i)
        threadDelay 100000
      putStrLn "cleanup done"
    Left e -> throwIO e
    Right () -> exitWith (ExitFailure 3)
