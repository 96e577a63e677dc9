-- | watch_child: a GHC program that starts other GHC programs, for
-- tests/e2e/test_watch_children.sh (`eventlog-live watch` must not hand
-- its RTS options to the program's children). Every mode first appends
-- "<show of getArgs>" and a newline to the file named by the environment
-- variable WATCH_CHILD_MARK, when set (one line per run of main: watch's
-- probe must never reach it), then prints "args <show of getArgs>" (what
-- reached the program's main).
--
--   watch_child parent N CHILD...: writes N user markers "parent marker
--     K", each printed as "marker K parent marker K" once written, with
--     some allocation between them; then runs each CHILD as "CHILD
--     child" (stdout shared) and prints "child CHILD exit CODE" (0 or
--     the failure's number); then writes "parent marker end" (printed
--     likewise) and prints "end". Exits 0.
--   watch_child child: prints "child GHCRTS=<its GHCRTS, or none>" and
--     "child fifo fds N" (its descriptors open on a FIFO, e.g. one
--     inherited from the parent), writes the user marker "child marker"
--     (when built with -eventlog) and exits 0.
--   watch_child args: writes the marker "args marker" (printed as
--     "marker 1 args marker") and exits 0.
module Main (main) where

import Control.Exception (SomeException, try)
import Control.Monad (forM_)
import Data.List (foldl')
import Debug.Trace (traceMarkerIO)
import System.Directory (getSymbolicLinkTarget, listDirectory)
import System.Environment (getArgs, lookupEnv)
import System.Exit (ExitCode (..))
import System.IO
import System.Process (rawSystem)

mark :: Int -> String -> IO ()
mark k text = do
  traceMarkerIO text
  putStrLn ("marker " ++ show k ++ " " ++ text)

-- | Descriptors of this process that are open on a FIFO ("pipe:" links
-- are pipes too: only paths ending in ".fifo" count).
fifoFds :: IO Int
fifoFds = do
  fds <- listDirectory "/proc/self/fd"
  ts <- mapM (\fd -> try (getSymbolicLinkTarget ("/proc/self/fd/" ++ fd))) fds
  return (length [t | Right t <- ts :: [Either SomeException FilePath],
                      reverse (take 5 (reverse t)) == ".fifo"])

main :: IO ()
main = do
  args <- getArgs
  markFile <- lookupEnv "WATCH_CHILD_MARK"
  maybe (return ()) (\f -> appendFile f (show args ++ "\n")) markFile
  hSetBuffering stdout LineBuffering
  putStrLn ("args " ++ show args)
  case args of
    ("parent" : n : children) -> do
      forM_ [1 .. read n :: Int] $ \k -> do
        mark k ("parent marker " ++ show k)
        print (foldl' (+) 0 [1 .. 200000 * k] `mod` 7)
      forM_ children $ \c -> do
        code <- rawSystem c ["child"]
        putStrLn ("child " ++ c ++ " exit " ++
                  (case code of ExitSuccess -> "0"; ExitFailure e -> show e))
      mark (read n + 1) "parent marker end"
      putStrLn "end"
    ["child"] -> do
      v <- lookupEnv "GHCRTS"
      putStrLn ("child GHCRTS=" ++ maybe "none" id v)
      nf <- fifoFds
      putStrLn ("child fifo fds " ++ show nf)
      traceMarkerIO "child marker"
    _ -> mark 1 "args marker"
