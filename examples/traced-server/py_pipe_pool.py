# A second program, written differently from traced-server, to check that
# the import is not fitted to it: a Python pool of N threads fed over one pipe
# each by the main thread, round-robin, K requests outstanding (closed loop);
# each request a bytecode CPU loop, time.sleep(2 ms), a shorter loop; replies
# over a shared pipe. Threads are unnamed, and every wake-up is followed by
# a wait for the GIL.  python3 py_pipe_pool.py N K SECONDS
import os, sys, threading, time
N = int(sys.argv[1]); K = int(sys.argv[2]); DUR = float(sys.argv[3])
def spin(n):
    x = 0
    for i in range(n): x += i * i
    return x
req = [os.pipe() for _ in range(N)]
done_r, done_w = os.pipe()
def worker(i):
    r = req[i][0]
    while True:
        b = os.read(r, 1)
        if b == b'q': return
        spin(3000)
        time.sleep(0.002)
        spin(1000)
        os.write(done_w, b'd')
ts = [threading.Thread(target=worker, args=(i,)) for i in range(N)]
for t in ts: t.start()
start = time.time(); n = 0; done = 0; rr = 0
for _ in range(K):
    os.write(req[rr % N][1], b'r'); rr += 1; n += 1
while time.time() - start < DUR:
    os.read(done_r, 1); done += 1
    os.write(req[rr % N][1], b'r'); rr += 1; n += 1
while done < n:
    os.read(done_r, 1); done += 1
el = time.time() - start
for i in range(N): os.write(req[i][1], b'q')
for t in ts: t.join()
print("py-pool: completed %d in %.3f s: throughput %.1f/s" % (done, el, done / el))
