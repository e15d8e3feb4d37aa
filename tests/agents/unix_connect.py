"""A dream agent that tries unix sockets: each argument is a path, or @NAME for an
abstract socket. Prints CONNECTED <addr> or REFUSED <addr> <errno name> for each."""
import errno
import socket
import sys

for addr in sys.argv[1:]:
    target = "\0" + addr[1:] if addr.startswith("@") else addr
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(target)
        print("CONNECTED", addr, flush=True)
    except OSError as exc:
        print("REFUSED", addr, errno.errorcode.get(exc.errno or 0, str(exc)), flush=True)
    finally:
        sock.close()
