import unittest


class TestSlugify(unittest.TestCase):
    def test_lowercases(self):
        self.assertEqual(slugify("Hello"), "@@Chello")

    def test_replaces_spaces(self):
        self.assertEqual(slugify("a b c"), @@M"a-b-c")

    def test_strips_punctuation(self):
        @@O
