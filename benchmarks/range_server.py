#!/usr/bin/env python3
"""A loopback HTTP server for the source benchmark: serves the files of a folder with range
requests (206, bounded ranges `bytes=A-B` too), and counts the body bytes it sends. GET /__stats gives
{"bytes": N, "requests": N} since the last GET /__reset. The send buffer is 256 KB (SNDBUF in the
environment changes it): about what a loaded server on a real network has in flight for a client,
so a request the client gives up costs what a real one would.

Usage: range_server.py FOLDER PORT_FILE   (writes the chosen port to PORT_FILE, then serves)
"""
import http.server
import json
import os
import socket
import sys
import threading

ROOT = sys.argv[1]
lock = threading.Lock()
stats = {"bytes": 0, "requests": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        self.request.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(os.environ.get("SNDBUF", 256 * 1024)))
        super().setup()

    def reply_json(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/__stats":
            with lock:
                return self.reply_json(dict(stats))
        if self.path == "/__reset":
            with lock:
                stats["bytes"] = 0
                stats["requests"] = 0
            return self.reply_json({})
        path = os.path.join(ROOT, os.path.basename(self.path.split("?")[0]))
        try:
            handle = open(path, "rb")
        except OSError:
            self.send_error(404)
            return
        with handle:
            size = os.fstat(handle.fileno()).st_size
            start, end = 0, size - 1
            header = self.headers.get("Range")
            if header and header.startswith("bytes="):
                first, _, last = header[6:].partition("-")
                start = int(first or 0)
                if last:
                    end = min(int(last), size - 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206 if header else 200)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start + 1))
            if header:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            self.wfile.flush()
            with lock:
                stats["requests"] += 1
            offset, remaining = start, end - start + 1
            if os.environ.get("RANGE_LOG"):
                sys.stderr.write(f"GET {self.path} from byte {start}\n")
            try:
                while remaining > 0:
                    sent = os.sendfile(self.connection.fileno(), handle.fileno(), offset, min(remaining, 65536))
                    if sent <= 0:
                        break
                    with lock:
                        stats["bytes"] += sent
                    offset += sent
                    remaining -= sent
            except OSError:
                self.close_connection = True
            if os.environ.get("RANGE_LOG"):
                sys.stderr.write(f"  sent {offset - start} bytes from {start}\n")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(sys.argv[2], "w") as port_file:
    port_file.write(str(server.server_address[1]))
server.serve_forever()
