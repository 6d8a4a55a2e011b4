"""AutoGraph converters: one module per Python construct, each with transform(tree, ctx).

They rewrite the AST only; api.py lists them in the order they run. Imports
nothing from kilnflow outside autograph/pyct and autograph/converters.
"""
