"""Charge every subscription whose billing period has started."""
from django.core.management.base import BaseCommand

from billing.models import Subscription


class Command(BaseCommand):
    help = "Charge due subscriptions"

    def handle(self, *args, **options):
        for subscription in Subscription.objects.due():
            subscription.charge()
