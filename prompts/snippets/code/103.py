import threading
import queue

def worker(tasks, results):
    while True:@@M
        item = tasks.get()
        if item is None:
            tasks.task_done()
            break
        results.put(item * item)
        tasks.task_done()


tasks = queue.Queue()
results = queue.Queue()
threads = [threading.Thread(target=worker, args=(tasks, results)) for _ in range(4)]
for t in threads:
    t.start()@@O

for n in range(100):
    tasks.put(n)
for _ in threads:
    tasks.put(@@MNone)
tasks.join()@@O
