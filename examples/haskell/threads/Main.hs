{-# LANGUAGE CPP #-}
-- | threads: labelled threads passing work through MVars, and sparks.
--
-- Every round emits the user marker @Round <i>@, then
--   * a labelled producer thread (@producer@) puts jobs into an MVar queue;
--   * W labelled worker threads (@worker-<k>@) take jobs, compute a naive
--     Fibonacci number in parallel with sparks ('par' / 'pseq') and put the
--     result into a results MVar;
--   * the main thread collects the results and emits the user message
--     @Round <i>: <jobs> jobs, total <t>@.
-- A long-lived labelled thread (@ticker@) wakes up every 100 ms.
-- Thread states (running, blocked on MVar, finished), GC, and spark
-- statistics all show up in the eventlog; run with +RTS -N2 or more.
--
-- Usage: threads [ROUNDS [DELAY_MS [WORKERS [JOBS]]]]
--   ROUNDS    number of rounds, 0 = forever (default 0)
--   DELAY_MS  pause between rounds in milliseconds (default 500)
--   WORKERS   worker threads per round (default 4)
--   JOBS      jobs per round (default 32)
--
-- With the cabal flag eventlog-socket (default) it starts eventlog-socket
-- from the environment, like oddball.
module Main (main) where

import Control.Concurrent
  (forkIO, myThreadId, newEmptyMVar, putMVar, takeMVar, threadDelay)
import Control.Concurrent.MVar (MVar)
import Control.Monad (forM_, forever, replicateM, unless)
import Debug.Trace (traceEventIO, traceMarkerIO)
import GHC.Conc (labelThread, par, pseq)
import System.Environment (getArgs)
import System.IO (BufferMode (LineBuffering), hSetBuffering, stdout)
import Text.Read (readMaybe)

#ifdef USE_EVENTLOG_SOCKET
import qualified GHC.Eventlog.Socket as EventlogSocket
#endif

data Opts = Opts
  { optRounds :: Int
  , optDelayMs :: Int
  , optWorkers :: Int
  , optJobs :: Int
  }

parseOpts :: [String] -> Either String Opts
parseOpts args = do
  ns <- mapM num args
  case ns of
    [] -> Right (Opts 0 500 4 32)
    [r] -> check (Opts r 500 4 32)
    [r, d] -> check (Opts r d 4 32)
    [r, d, w] -> check (Opts r d w 32)
    [r, d, w, j] -> check (Opts r d w j)
    _ -> Left "too many arguments"
  where
    num s = maybe (Left ("not a number: " ++ s)) Right (readMaybe s)
    check o
      | optRounds o < 0 || optDelayMs o < 0 = Left "negative argument"
      | optWorkers o < 1 || optJobs o < 1 = Left "WORKERS and JOBS must be >= 1"
      | otherwise = Right o

-- | Naive Fibonacci; above the threshold the two halves are sparked.
pfib :: Int -> Int -> Integer
pfib threshold n
  | n < 2 = toInteger n
  | n < threshold = sfib n
  | otherwise = a `par` (b `pseq` (a + b))
  where
    a = pfib threshold (n - 1)
    b = pfib threshold (n - 2)

sfib :: Int -> Integer
sfib n = if n < 2 then toInteger n else sfib (n - 1) + sfib (n - 2)

-- | Fork a thread and give it a label (visible as a ThreadLabel event).
forkLabelled :: String -> IO () -> IO ()
forkLabelled name act = do
  _ <- forkIO $ do
    tid <- myThreadId
    labelThread tid name
    act
  return ()

main :: IO ()
main = do
  args <- getArgs
  case parseOpts args of
    Left err -> ioError (userError ("threads: " ++ err ++
      "\nusage: threads [ROUNDS [DELAY_MS [WORKERS [JOBS]]]]"))
    Right opts -> do
#ifdef USE_EVENTLOG_SOCKET
      EventlogSocket.startFromEnv
#endif
      hSetBuffering stdout LineBuffering
      tid <- myThreadId
      labelThread tid "main"
      forkLabelled "ticker" (forever (threadDelay 100000))
      runRounds opts 1

runRounds :: Opts -> Int -> IO ()
runRounds opts i = do
  traceMarkerIO ("Round " ++ show i)
  queue <- newEmptyMVar :: IO (MVar (Maybe Int))
  results <- newEmptyMVar :: IO (MVar Integer)
  let jobs = optJobs opts
      workers = optWorkers opts
  forkLabelled "producer" $ do
    forM_ [0 .. jobs - 1] $ \j -> putMVar queue (Just (18 + j `mod` 8))
    forM_ [1 .. workers] $ \_ -> putMVar queue Nothing
  forM_ [1 .. workers] $ \k ->
    forkLabelled ("worker-" ++ show k) (worker queue results)
  rs <- replicateM jobs (takeMVar results)
  let total = sum rs
  traceEventIO ("Round " ++ show i ++ ": " ++ show jobs ++ " jobs, total "
                ++ show total)
  putStrLn ("Round " ++ show i ++ ": total " ++ show total)
  let finished = optRounds opts /= 0 && i >= optRounds opts
  unless finished $ do
    threadDelay (optDelayMs opts * 1000)
    runRounds opts (i + 1)

worker :: MVar (Maybe Int) -> MVar Integer -> IO ()
worker queue results = do
  job <- takeMVar queue
  case job of
    Nothing -> return ()
    Just n -> do
      let r = pfib 15 n
      r `pseq` putMVar results r
      worker queue results
