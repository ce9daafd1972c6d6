import numpy as np

x = np.linspace(0, 1, 11)
y = x ** 2
area = np.trapz(y, @@Cx)@@O
