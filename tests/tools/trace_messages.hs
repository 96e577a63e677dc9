-- trace_messages.hs: a GHC program that writes N user messages
-- (traceEventIO, USER_MSG) and one marker (traceMarkerIO, USER_MARKER) per
-- 1,000 of them as fast as it can, for scripts/bench.d/logs.sh: the
-- densest log stream a Haskell program writes.
-- Usage: trace_messages N +RTS -l -ol<file>
import Control.Monad (forM_, when)
import Debug.Trace (traceEventIO, traceMarkerIO)
import System.Environment (getArgs)

main :: IO ()
main = do
  args <- getArgs
  let n = case args of
        (a : _) -> read a
        [] -> 1000000 :: Int
  forM_ [1 .. n] $ \i -> do
    traceEventIO ("request " ++ show i ++ " served in " ++ show (i `mod` 97) ++ " ms")
    when (i `mod` 1000 == 0) $ traceMarkerIO ("checkpoint " ++ show i)
