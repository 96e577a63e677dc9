-- CheckCabal: parse .cabal files with the Cabal library that ships with
-- GHC (Debian: ghc) and require the eventlog-socket flag of the examples.
--   runghc --ghc-arg=-package --ghc-arg=Cabal CheckCabal.hs FILE.cabal...
import Control.Monad (forM_, unless)
import qualified Data.ByteString as BS
import Distribution.PackageDescription.Parsec
  (parseGenericPackageDescription, runParseResult)
import Distribution.Types.GenericPackageDescription
import Distribution.Types.Flag (unFlagName, flagName)
import System.Environment (getArgs)
import System.Exit (exitFailure)

main :: IO ()
main = do
  files <- getArgs
  forM_ files $ \f -> do
    bs <- BS.readFile f
    let (_, r) = runParseResult (parseGenericPackageDescription bs)
    case r of
      Left (_, errs) -> do
        putStrLn ("FAIL: " ++ f ++ ": " ++ show errs)
        exitFailure
      Right gpd -> do
        let flags = map (unFlagName . flagName) (genPackageFlags gpd)
            exes = map fst (condExecutables gpd)
        unless ("eventlog-socket" `elem` flags) $ do
          putStrLn ("FAIL: " ++ f ++ ": no flag eventlog-socket")
          exitFailure
        putStrLn ("ok: " ++ f ++ " parses (Cabal library), executables "
                  ++ show exes ++ ", flags " ++ show flags)
