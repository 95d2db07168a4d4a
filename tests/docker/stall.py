#!/usr/bin/env python3
"""tests/docker/stall.py - a registry that accepts connections and never
answers (for the pull deadline).  Prints its port, then serves until
killed; each connection is held open and read, never written to."""
import socket
import sys
import threading


def hold(conn):
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass
    conn.close()


def main():
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print(srv.getsockname()[1], flush=True)
    sys.stdout.close()
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=hold, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
