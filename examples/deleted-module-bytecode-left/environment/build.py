from make_cipher import write_puzzle

write_puzzle("/app/cipher.txt")
