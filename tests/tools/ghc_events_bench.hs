-- ghc_events_bench.hs: the ghc-events library (Debian's 0.17.0.3) as a
-- baseline for scripts/bench.d/decoder.sh when no ghc-events binary is on
-- PATH. `show FILE` prints like `ghc-events show`; `count FILE` decodes
-- every event to weak head normal form (most EventInfo fields are strict),
-- the decoder-only figure.
import GHC.RTS.Events
import System.Environment (getArgs)
import System.IO
import Data.List (foldl')

main :: IO ()
main = do
  [cmd, f] <- getArgs
  r <- readEventLogFromFile f
  case r of
    Left err -> hPutStrLn stderr err
    Right el@(EventLog _ (Data evs)) -> case cmd of
      "show" -> putStr (ppEventLog el)
      _ -> print (foldl' (\n e -> evTime e `seq` evSpec e `seq` n + 1) (0 :: Int) evs)
