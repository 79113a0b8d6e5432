"""OpenID Connect para la entrada del personal (Authlib para el protocolo, joserfc para el
ID token): código de autorización con PKCE (S256), ``state`` y ``nonce``.

- El documento de descubrimiento (``{emisor}/.well-known/openid-configuration``) da los
  puntos de autorización, de token, de salida y el JWKS; su ``issuer`` debe ser el emisor
  configurado. Se guarda en memoria una hora; el JWKS se vuelve a pedir si llega un ``kid``
  desconocido (el proveedor rotó sus claves).
- El ID token se valida contra ese JWKS: firma (solo algoritmos asimétricos), ``iss``,
  ``aud`` (y ``azp`` si hay varias audiencias), ``exp``, ``iat`` y el ``nonce`` de este
  intento. El correo debe venir verificado (``email_verified``) y, si el proveedor tiene
  ``dominios``, ser de uno de ellos.

Nada de esto toca la base: quién es la persona lo decide el servicio por su correo.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from authlib.integrations.httpx_client import OAuth2Client
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from nucleo.ajustes import ProveedorOidc

__all__ = ["ALGORITMOS", "ClienteOidc", "ErrorOidc", "Intento", "validar_id_token"]

ALGORITMOS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
CACHE_SEGUNDOS = 3600.0
MARGEN_SEGUNDOS = 60  # desfase de reloj admitido con el proveedor


class ErrorOidc(Exception):
    """La entrada no se puede completar; ``mensaje`` en español para la persona."""

    def __init__(self, mensaje: str) -> None:
        super().__init__(mensaje)
        self.mensaje = mensaje


@dataclass(frozen=True)
class Intento:
    """Lo que se guarda (firmado, en una cookie) entre la ida al proveedor y la vuelta."""

    proveedor: str
    state: str
    nonce: str
    verificador: str

    @classmethod
    def nuevo(cls, proveedor: str) -> Intento:
        return cls(proveedor, secrets.token_urlsafe(24), secrets.token_urlsafe(24), secrets.token_urlsafe(48))


def validar_id_token(
    id_token: str, *, claves: KeySet, emisor: str, client_id: str, nonce: str,
    ahora: int | None = None,
) -> dict[str, Any]:
    """Las claims de un ID token válido para este cliente y este intento; ``ErrorOidc`` si no."""
    try:
        token = jwt.decode(id_token, claves, algorithms=ALGORITMOS)
    except (JoseError, ValueError) as exc:
        raise ErrorOidc(f"El proveedor devolvió un ID token que no se puede verificar ({type(exc).__name__}).") from None
    claims = token.claims
    registro = jwt.JWTClaimsRegistry(
        now=ahora, leeway=MARGEN_SEGUNDOS,
        iss={"essential": True, "value": emisor},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
    )
    try:
        registro.validate(claims)
    except JoseError as exc:
        raise ErrorOidc(f"El ID token no es para esta aplicación o ha caducado ({exc.error}).") from None
    aud = claims.get("aud")
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != client_id:
        raise ErrorOidc("El ID token es para otra aplicación (azp).")
    if not isinstance(claims.get("nonce"), str) or not secrets.compare_digest(claims["nonce"], nonce):
        raise ErrorOidc("El ID token no corresponde a este intento de entrada (nonce).")
    return dict(claims)


class ClienteOidc:
    """Un proveedor configurado: descubrimiento, URL de ida, canje del código y salida."""

    def __init__(self, proveedor: ProveedorOidc, *, base_url: str, timeout: float = 10.0) -> None:
        self.proveedor = proveedor
        self.emisor = proveedor.emisor.rstrip("/")
        self.redirect_uri = f"{base_url.rstrip('/')}/entrada/oidc/{proveedor.nombre}/vuelta"
        self._timeout = timeout
        self._cerrojo = threading.Lock()
        self._doc: tuple[float, dict[str, Any]] | None = None
        self._claves: KeySet | None = None

    def _get_json(self, url: str) -> dict[str, Any]:
        try:
            respuesta = httpx.get(url, timeout=self._timeout, follow_redirects=False)
            respuesta.raise_for_status()
            return respuesta.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ErrorOidc(f"No se puede hablar con el proveedor {self.proveedor.etiqueta()} ({type(exc).__name__}).") from None

    def descubrimiento(self) -> dict[str, Any]:
        with self._cerrojo:
            if self._doc and time.monotonic() - self._doc[0] < CACHE_SEGUNDOS:
                return self._doc[1]
        doc = self._get_json(f"{self.emisor}/.well-known/openid-configuration")
        if doc.get("issuer", "").rstrip("/") != self.emisor:
            raise ErrorOidc("El documento de descubrimiento es de otro emisor.")
        for campo in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(doc.get(campo), str):
                raise ErrorOidc(f"El proveedor no publica {campo}.")
        with self._cerrojo:
            self._doc = (time.monotonic(), doc)
            self._claves = None
        return doc

    def claves(self, *, renovar: bool = False) -> KeySet:
        doc = self.descubrimiento()
        with self._cerrojo:
            if self._claves is not None and not renovar:
                return self._claves
        try:
            claves = KeySet.import_key_set(self._get_json(doc["jwks_uri"]))
        except (JoseError, ValueError, KeyError, TypeError):
            raise ErrorOidc("El JWKS del proveedor no se puede leer.") from None
        with self._cerrojo:
            self._claves = claves
        return claves

    def _cliente(self) -> OAuth2Client:
        secreto = self.proveedor.client_secret.get_secret_value() if self.proveedor.client_secret else None
        return OAuth2Client(
            client_id=self.proveedor.client_id, client_secret=secreto,
            token_endpoint_auth_method="client_secret_basic" if secreto else "none",
            scope=self.proveedor.scopes, redirect_uri=self.redirect_uri,
            code_challenge_method="S256", timeout=self._timeout,
        )

    def url_ida(self, intento: Intento) -> str:
        """La URL de autorización del proveedor para este intento (PKCE S256, state, nonce)."""
        with self._cliente() as cliente:
            url, _ = cliente.create_authorization_url(
                self.descubrimiento()["authorization_endpoint"], state=intento.state,
                nonce=intento.nonce, code_verifier=intento.verificador,
            )
        return url

    def canjear(self, code: str, intento: Intento) -> dict[str, Any]:
        """Canjea el código (con el verificador PKCE) y devuelve las claims del ID token ya validado."""
        try:
            with self._cliente() as cliente:
                token = cliente.fetch_token(
                    self.descubrimiento()["token_endpoint"], grant_type="authorization_code",
                    code=code, code_verifier=intento.verificador,
                )
        except ErrorOidc:
            raise
        except Exception as exc:  # OAuthError, httpx: el proveedor rechazó el código
            raise ErrorOidc(f"El proveedor no aceptó el código de entrada ({type(exc).__name__}).") from None
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise ErrorOidc("El proveedor no devolvió un ID token.")
        datos = dict(claves=self.claves(), emisor=self.emisor, client_id=self.proveedor.client_id, nonce=intento.nonce)
        try:
            return validar_id_token(id_token, **datos)
        except ErrorOidc:
            # Quizá rotó sus claves: una segunda vez con el JWKS recién pedido.
            datos["claves"] = self.claves(renovar=True)
            return validar_id_token(id_token, **datos)

    def email_verificado(self, claims: dict[str, Any]) -> str:
        """El correo de las claims, si viene verificado y de un dominio admitido."""
        email = claims.get("email")
        if not isinstance(email, str) or "@" not in email:
            raise ErrorOidc("El proveedor no ha dado tu correo: no podemos saber quién eres.")
        dominios = [d.lower().lstrip("@") for d in self.proveedor.dominios]
        por_dominio = self.proveedor.confiar_dominios and dominios and "email_verified" not in claims
        if claims.get("email_verified") is not True and not por_dominio:
            raise ErrorOidc(f"El proveedor no garantiza que {email} sea tuyo (correo sin verificar).")
        if dominios and email.rsplit("@", 1)[1].lower() not in dominios:
            raise ErrorOidc(f"El correo {email} no es de un dominio admitido para entrar.")
        return email

    def url_salida(self, vuelta: str) -> str | None:
        """La URL de cierre de sesión del proveedor (si la ofrece) que vuelve a ``vuelta``."""
        try:
            fin = self.descubrimiento().get("end_session_endpoint")
        except ErrorOidc:
            return None
        if not isinstance(fin, str):
            return None
        consulta = urlencode({"client_id": self.proveedor.client_id, "post_logout_redirect_uri": vuelta})
        return f"{fin}{'&' if '?' in fin else '?'}{consulta}"
