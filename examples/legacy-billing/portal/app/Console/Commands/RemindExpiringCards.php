<?php

namespace App\Console\Commands;

use App\Models\Card;
use Illuminate\Console\Command;

class RemindExpiringCards extends Command
{
    protected $signature = 'cards:remind-expiring';

    protected $description = 'Mail the customers whose card expires this month';

    public function handle(): int
    {
        foreach (Card::expiringThisMonth()->cursor() as $card) {
            $card->owner->notify(new \App\Notifications\CardExpiring($card));
        }

        return self::SUCCESS;
    }
}
