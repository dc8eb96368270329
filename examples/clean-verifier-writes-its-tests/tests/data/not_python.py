def greet(name)
    return "this file is an input, not Python"
