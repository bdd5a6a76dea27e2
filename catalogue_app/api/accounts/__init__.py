"""Accounts: users, groups, sign-in, OAuth2 tokens and personal tokens."""
