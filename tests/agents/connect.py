"""A dream agent that tries to reach a TCP service: argv HOST PORT. Prints CONNECTED
(and the first line of an HTTP answer) or REFUSED <errno name>."""
import errno
import socket
import sys

host, port = sys.argv[1], int(sys.argv[2])
try:
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        print("CONNECTED", conn.recv(200).split(b"\r\n", 1)[0].decode("latin-1"), flush=True)
except OSError as exc:
    print("REFUSED", errno.errorcode.get(exc.errno or 0, str(exc)), flush=True)
