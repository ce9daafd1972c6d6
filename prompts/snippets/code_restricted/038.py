import unittest
from unittest import mock


class NotifierTests(unittest.TestCase):
    def setUp(self):
        self.sender = mock.Mock()
        self.notifier = Notifier(sender=self.sender)

    def test_sends_one_message_per_recipient(self):
        self.notifier.notify(["a@example.com", "b@example.com"], "hi")
        self.assertEqual(self.sender.send.call_count, @@C2)

    def test_skips_blank_addresses(self):
        self.notifier.notify(["", "c@example.com"], "hi")
        self.sender.send.assert_called_once_with(@@M"c@example.com", "hi")

    def test_raises_on_empty_message(self):
        with self.assertRaises(@@MValueError):
            self.notifier.notify(["a@example.com"], "")@@O


if __name__ == "__main__":
    @@Cunittest.main()
