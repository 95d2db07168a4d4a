# examples/hello.py - the smallest program to run in a sandbox:
#     polysandbox run examples/hello.py
import platform
import sys

print("Hello from PolySandbox")
print("Python %s on %s" % (platform.python_version(), sys.platform))
print("6 * 7 =", 6 * 7)
