"""Match yesterday's bank statement lines with payments."""
import redis
from django.core.management.base import BaseCommand

r = redis.Redis()


class Command(BaseCommand):
    def handle(self, *args, **options):
        if not r.set("lock:reconcile", "1", nx=True):
            return
        self.reconcile()
        r.delete("lock:reconcile")

    def reconcile(self):
        print("reconciling")
