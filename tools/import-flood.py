#!/usr/bin/env python3
"""Issue 12's flood, by hand: on a fresh rosterd, one user with a 15,000-contact book pipelines 150 one-row
contacts.import calls; meanwhile another user logs in and resumes a token on fresh connections. Prints how
those two were answered and how long they took, and how the flood was answered (queued or busy).
Usage: tools/import-flood.py SOCKET   (the daemon's database must not have flood1 or calm12 yet)"""
import socket, json, time, sys, threading
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s, s.makefile("rwb")
class C:
    def __init__(self): self.s, self.f = conn(); self.n = 0
    def call(self, m, p={}):
        self.n += 1; n = self.n
        self.f.write((json.dumps({"id": n, "method": m, "params": p}) + "\n").encode()); self.f.flush()
        while True:
            a = json.loads(self.f.readline())
            if a.get("id") == n: return a
setup = C()
for u in ["flood1", "calm12"]: setup.call("users.register", {"username": u, "password": "secret1"})
token = setup.call("auth.login", {"username": "calm12", "password": "secret1"})["result"]["token"]
fl = C(); fl.call("auth.login", {"username": "flood1", "password": "secret1"})
for i in range(0, 15000, 2000):
    fl.call("contacts.import", {"format": "csv", "data": "name\r\n" + "".join("Person %d\r\n" % j for j in range(i, min(15000, i+2000)))})
# 150 pipelined one-row imports
batch = b"".join((json.dumps({"id": 10000+i, "method": "contacts.import", "params": {"format": "csv", "data": "name\r\nFlood %d\r\n" % i}}) + "\n").encode() for i in range(150))
t0 = time.perf_counter()
fl.f.write(batch); fl.f.flush()
res = {"ok": 0, "busy": 0}
def reader():
    for _ in range(150):
        a = json.loads(fl.f.readline())
        res["busy" if "error" in a else "ok"] += 1
    res["drained"] = time.perf_counter() - t0
th = threading.Thread(target=reader); th.start()
time.sleep(0.05)
v = C(); t = time.perf_counter(); a = v.call("auth.login", {"username": "calm12", "password": "secret1"}); print("login", "ok" if "result" in a else a["error"]["data"], "%.0f ms" % ((time.perf_counter()-t)*1000))
r = C(); t = time.perf_counter(); a = r.call("session.resume", {"token": token}); print("resume", "ok" if "result" in a else a["error"]["data"], "%.0f ms" % ((time.perf_counter()-t)*1000))
th.join()
print("flood:", res)
