"""La validación del ID token de OpenID Connect (issue 28): contra el JWKS del proveedor,
para este emisor, esta audiencia y este intento (nonce). Un ID token de otro emisor, para
otra aplicación, con otro nonce, caducado o firmado con otra clave no vale."""

from __future__ import annotations

import time

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey, RSAKey

from agente.web.entrada.oidc import ClienteOidc, ErrorOidc, validar_id_token
from nucleo.ajustes import ProveedorOidc

EMISOR = "https://id.tienda.example"
CLIENTE = "bandeja"
NONCE = "nonce-de-este-intento"
CLAVE = RSAKey.generate_key(2048, parameters={"kid": "k1"})
OTRA_CLAVE = RSAKey.generate_key(2048, parameters={"kid": "k1"})
JWKS = KeySet([CLAVE])


def _id_token(clave=CLAVE, alg="RS256", **cambios) -> str:
    ahora = int(time.time())
    claims = {"iss": EMISOR, "aud": CLIENTE, "sub": "lucia", "iat": ahora, "exp": ahora + 300,
              "nonce": NONCE, "email": "enc-talavera@tienda.example", "email_verified": True}
    claims.update(cambios)
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode({"alg": alg, "kid": "k1"}, claims, clave)


def _validar(token: str) -> dict:
    return validar_id_token(token, claves=JWKS, emisor=EMISOR, client_id=CLIENTE, nonce=NONCE)


def test_un_id_token_bueno_vale():
    assert _validar(_id_token())["email"] == "enc-talavera@tienda.example"


@pytest.mark.parametrize(("cambios", "texto"), [
    ({"iss": "https://otro-emisor.example"}, "no es para esta aplicación"),
    ({"aud": "otra-aplicacion"}, "no es para esta aplicación"),
    ({"aud": ["otra-aplicacion", CLIENTE], "azp": "otra-aplicacion"}, "azp"),
    ({"nonce": "otro-nonce"}, "nonce"),
    ({"nonce": None}, "nonce"),
    ({"exp": int(time.time()) - 3600}, "caducado"),
    ({"iss": None}, "no es para esta aplicación"),
])
def test_un_id_token_de_otro_emisor_audiencia_o_intento_se_rechaza(cambios, texto):
    with pytest.raises(ErrorOidc, match=texto):
        _validar(_id_token(**cambios))


def test_un_id_token_firmado_con_otra_clave_se_rechaza():
    with pytest.raises(ErrorOidc, match="no se puede verificar"):
        _validar(_id_token(clave=OTRA_CLAVE))


def test_un_id_token_con_firma_simetrica_se_rechaza():
    # Un HS256 con cualquier secreto no es del proveedor: solo algoritmos asimétricos.
    with pytest.raises(ErrorOidc):
        _validar(_id_token(clave=OctKey.generate_key(256), alg="HS256"))


def _cliente(**extra) -> ClienteOidc:
    proveedor = ProveedorOidc(nombre="p", emisor=EMISOR, client_id=CLIENTE, client_secret="s", **extra)
    return ClienteOidc(proveedor, base_url="https://bandeja.example")


def test_el_correo_debe_venir_verificado_y_de_un_dominio_admitido():
    cliente = _cliente(dominios=["tienda.example"])
    assert cliente.email_verificado({"email": "a@tienda.example", "email_verified": True}) == "a@tienda.example"
    with pytest.raises(ErrorOidc, match="sin verificar"):
        cliente.email_verificado({"email": "a@tienda.example", "email_verified": False})
    with pytest.raises(ErrorOidc, match="dominio"):
        cliente.email_verificado({"email": "a@otra.example", "email_verified": True})
    with pytest.raises(ErrorOidc, match="correo"):
        cliente.email_verificado({"email_verified": True})


def test_sin_email_verified_vale_por_dominio_solo_si_se_configura():
    claims = {"email": "a@tienda.example"}  # Entra ID no envía email_verified
    with pytest.raises(ErrorOidc):
        _cliente(dominios=["tienda.example"]).email_verificado(claims)
    assert _cliente(dominios=["tienda.example"], confiar_dominios=True).email_verificado(claims)
    with pytest.raises(ErrorOidc):
        _cliente(confiar_dominios=True).email_verificado(claims)  # sin dominios no


def test_el_secreto_del_cliente_no_sale_en_un_volcado_de_los_ajustes():
    proveedor = ProveedorOidc(nombre="p", emisor=EMISOR, client_id=CLIENTE, client_secret="muy-secreto")
    assert "muy-secreto" not in repr(proveedor) and "muy-secreto" not in str(proveedor.model_dump())
