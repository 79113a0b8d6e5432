"""La caja: el libro de compensaciones, la pasarela de pagos (simulada o Stripe) y su
cola de movimientos. Debajo de las herramientas y encima del núcleo."""
