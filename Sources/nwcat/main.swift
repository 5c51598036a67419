import Network
import ArgumentParser
print("nwcat")
