-- Cuándo llega el dinero de un reembolso (issue 43): el medio con que se pagó cada pedido y,
-- por tienda, el plazo típico que se dice al cliente por medio (nucleo/abonos.py,
-- politicas/valores.py). Defectos: tarjeta 10 días hábiles, Bizum 2, transferencia 3.

ALTER TABLE pedidos
    ADD COLUMN metodo_pago text NOT NULL DEFAULT 'tarjeta'
        CONSTRAINT pedidos_metodo_pago_valido CHECK (metodo_pago IN ('tarjeta', 'bizum', 'transferencia'));

ALTER TABLE politicas_tienda
    ADD COLUMN plazo_abono_tarjeta_dias integer NOT NULL DEFAULT 10
        CONSTRAINT politicas_tienda_dominio_plazo_abono_tarjeta_dias
        CHECK (plazo_abono_tarjeta_dias BETWEEN 1 AND 60),
    ADD COLUMN plazo_abono_bizum_dias integer NOT NULL DEFAULT 2
        CONSTRAINT politicas_tienda_dominio_plazo_abono_bizum_dias
        CHECK (plazo_abono_bizum_dias BETWEEN 1 AND 60),
    ADD COLUMN plazo_abono_transferencia_dias integer NOT NULL DEFAULT 3
        CONSTRAINT politicas_tienda_dominio_plazo_abono_transferencia_dias
        CHECK (plazo_abono_transferencia_dias BETWEEN 1 AND 60);
