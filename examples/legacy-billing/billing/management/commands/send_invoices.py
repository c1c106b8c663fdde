"""E-mail the invoices of the previous day."""
from django.core.management.base import BaseCommand

from billing.models import Invoice


class Command(BaseCommand):
    def handle(self, *args, **options):
        for invoice in Invoice.objects.unsent():
            invoice.send()
